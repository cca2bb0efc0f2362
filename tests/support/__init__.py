"""Code shared by the tests (imported as ``support.<module>``; tests/ is on the path)."""
