"""What the surfaces show of the memory, one shape each whatever the door: the REST API's
JSON answers and the command line's output alike (`lobug facts --json` prints what
`GET /memory/facts/{agent}` answers). Ids are strings, times ISO 8601 in UTC.

Request bodies and the shapes only one surface answers stay with that surface."""
