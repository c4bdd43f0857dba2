"""Example domains built on harnesskit's public API (one subpackage per domain)."""
