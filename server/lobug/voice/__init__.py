"""A spoken turn around `lobug.turn`: `listening` takes audio frames as they arrive,
`endpointing` decides when the person has finished (the turn-end model, then the language's
word rules), and `pipeline` transcribes, hands the words to the turn and speaks the answer."""
