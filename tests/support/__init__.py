"""Helpers the tests (and benches) share: conformance data, the CLI runner, servers, kits."""
