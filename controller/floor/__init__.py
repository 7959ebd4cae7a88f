"""The floor: journals (and later progressives) replicated to a NATS JetStream cluster so Croupier spans many machines.

`wire` (the message format and the chain check, pure), `config` (the `[floor]` section), `server` (finding
and running nats-server), `replicator` (a machine's journal to the floor), `ingest` (the floor's check of
every machine's chain, and reading a machine's floor copy), `anchor` (the start check against the floor, and
restore), `summary` and `report` (what the floor folds of each machine, the meters CSV; pure), `service` and
`page` (`croupier floor serve` and its page), `embedded` (one local server), `credentials` (a site's TLS
certificates and per-machine permissions). nats-py is imported only inside functions that talk to the floor: a
machine with no `[floor]` never needs it (`pip install -e '.[floor]'` brings it).
"""
