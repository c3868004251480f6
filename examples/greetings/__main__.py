"""``python -m examples.greetings``: run the Greeting operator against the current cluster
(``$KUBECONFIG`` or ``~/.kube/config``, or in-cluster), installing its CRD when missing."""

from pathlib import Path

from kube_runtime import Manager, logs
from kube_runtime.crds import install_crd

from .operator import setup

logs.setup()
manager = Manager(leader_election=True, leader_election_id="greetings")
install_crd(manager.api_reader, Path(__file__).with_name("crd.yaml"))
setup(manager)
manager.start()  # until Ctrl-C / SIGTERM
