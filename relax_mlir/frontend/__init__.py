"""Frontends: importers that turn models from other frameworks into relax modules."""
