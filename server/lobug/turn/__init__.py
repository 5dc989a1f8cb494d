"""One turn of a conversation, in the order its data flows (docs/architecture.md).

`devices` holds what a device's turns share; `early` reads memory while the person is still
speaking; `spoken_curation` and `request_tools` carry out what a person asks of their memory
("forget that"); `recall` answers from memory alone where it can; `assistant` prepares the
prompt, `streaming` streams the model's answer sentence by sentence, `reply_guard` refuses
what memory does not hold, and the assistant remembers the turn. `proxy` serves the same
memory to OpenAI-compatible callers, `timings` records where a turn's time went."""
