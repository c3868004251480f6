"""CRD manifest -> typed pydantic v2 models."""
