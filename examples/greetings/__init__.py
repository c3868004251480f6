"""The tutorial's operator (docs/tutorial.md): each Greeting keeps one ConfigMap holding its
message and reports the message it last wrote in ``status.observed``.

``operator.py`` is the whole controller; ``models.py`` is generated from ``crd.yaml`` by
``kube-runtime codegen``; ``__main__.py`` runs it against a cluster; ``test_operator.py``
tests it on the fake client and on the embedded cluster.
"""
