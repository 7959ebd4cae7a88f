"""Benchmarks behind `croupier bench NAME`: each module defines HELP, add_arguments(parser) and run(args, say) -> figures."""
