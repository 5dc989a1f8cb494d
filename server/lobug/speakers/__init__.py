"""Recognition by voice: speaker embeddings (`embedder`), who is speaking (`identify`),
profiles as embeddings only (`profiles`), and the embedding computed while a person speaks
(`live`)."""
