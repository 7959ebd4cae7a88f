"""Subcommands of `croupier`: each module defines `register(subparsers)` and is found automatically."""
