"""Repository-wide rules checked as tests: the import layering and the error-handling style."""
