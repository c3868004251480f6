"""The code generator's unit tests; helpers in ``tests/support/codegen.py`` and the sample
resource in ``tests/support/crdgen_models.py``."""
