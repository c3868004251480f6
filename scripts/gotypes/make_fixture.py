"""Write tests/unit/controllers/deployment_hash_fixture.json: pod templates with the
``pod-template-hash`` upstream's own ``controller.ComputeHash`` gives them.

Usage (see README.md): ``python scripts/gotypes/make_fixture.py /path/to/gotypes``, where
gotypes is this directory's Go program built inside a Kubernetes 1.20 source tree.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[2] / "tests/unit/controllers/deployment_hash_fixture.json"

QUANTITIES = [
    "100m",
    "1Gi",
    "0.5",
    "1e3",
    "129M",
    "1.5Gi",
    "8Gi",
    "1024",
    "1000",
    "100Ti",
    "1Ei",
    "512Pi",
    "0.1",
    "1.5",
    "12e6",
    "1e4",
    "-1",
    "0",
    "0.0001",
    "1n",
    "1u",
    "500Mi",
    "2E",
    "10E",
    "9223372036854775807",
    "123456789012345678901234",
    "1.0000000001",
    "0.1Ki",
    "+5",
    "00100",
    ".5",
    "1E",
    "3k",
    "2000m",
    "1.25",
    "7Ki",
    "16Ei",
    "0.000000001",
    "1e-3",
    "5e+2",
    "1024Mi",
    "1536Mi",
    "10Ti",
    "64M",
    "2.5G",
    "100",
    "1.5e3",
    "999999999999999999",
    "-1.5Gi",
    "-100Ti",
    "1.5Ki",
    "0.5Ki",
    "-0",
    "0m",
    "0Gi",
    "1e-9",
    "1e-10",
    "12345678901234567890m",
    "1Pi",
    "1e18",
    "1e19",
    "1000E",
    "-9223372036854775808",
    "0.000000000000001Ki",
    "1.23456789e2",
    "5e-1",
    "100001",
    "1000000000000",
    "2Ti",
    "3Pi",
    "0.001Ki",
    "1E3",
    "6Ki",
]


def container(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "registry.example/" + name + ":1.0", **extra}


DEFAULTED = {
    "metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx:1.19",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "securityContext": {},
        "schedulerName": "default-scheduler",
    },
}


def cases() -> list[tuple[str, dict[str, Any], int | None]]:
    out: list[tuple[str, dict[str, Any], int | None]] = [
        ("minimal", {"spec": {"containers": [container("a")]}}, None),
        ("empty", {}, None),
        ("defaulted", DEFAULTED, None),
        ("defaulted collision 0", DEFAULTED, 0),
        ("defaulted collision 1", DEFAULTED, 1),
        ("defaulted collision 7", DEFAULTED, 7),
        ("defaulted collision max", DEFAULTED, 2**31 - 1),
    ]
    for i in range(0, len(QUANTITIES), 4):
        chunk = QUANTITIES[i : i + 4]
        limits = {f"example.com/r{j}": q for j, q in enumerate(chunk)}
        requests = {"cpu": chunk[0], "memory": chunk[-1]}
        out.append(
            (
                "quantities " + " ".join(chunk),
                {
                    "spec": {
                        "containers": [
                            container("q", resources={"limits": limits, "requests": requests})
                        ]
                    }
                },
                None,
            )
        )
    probes = container(
        "probes",
        livenessProbe={
            "httpGet": {
                "path": "/healthz",
                "port": 8080,
                "scheme": "HTTP",
                "httpHeaders": [{"name": "X-A", "value": "b"}],
            },
            "initialDelaySeconds": 3,
            "timeoutSeconds": 1,
            "periodSeconds": 10,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        readinessProbe={"tcpSocket": {"port": "http"}, "periodSeconds": 5},
        startupProbe={"exec": {"command": ["cat", "/tmp/ready"]}, "failureThreshold": 30},
        lifecycle={
            "preStop": {"exec": {"command": ["sleep", "5"]}},
            "postStart": {"httpGet": {"port": "web", "host": "localhost"}},
        },
        ports=[
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {
                "name": "dns",
                "containerPort": 53,
                "protocol": "UDP",
                "hostPort": 5353,
                "hostIP": "0.0.0.0",
            },
        ],
    )
    out.append(("probes lifecycle ports", {"spec": {"containers": [probes]}}, None))
    security = container(
        "sec",
        securityContext={
            "runAsUser": 0,
            "runAsGroup": 1000,
            "runAsNonRoot": False,
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
            "privileged": False,
            "capabilities": {"add": ["NET_ADMIN"], "drop": ["ALL"]},
            "seLinuxOptions": {"level": "s0:c123,c456"},
            "procMount": "Default",
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    )
    out.append(
        (
            "security contexts",
            {
                "spec": {
                    "containers": [security],
                    "securityContext": {
                        "fsGroup": 2000,
                        "supplementalGroups": [1, 2, 3],
                        "runAsUser": 1099511627776,
                        "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}],
                        "seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"},
                        "fsGroupChangePolicy": "OnRootMismatch",
                        "windowsOptions": {"runAsUserName": "ContainerUser"},
                    },
                }
            },
            3,
        )
    )
    env = container(
        "env",
        env=[
            {"name": "PLAIN", "value": "x"},
            {"name": "EMPTY", "value": ""},
            {
                "name": "NODE",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
            },
            {
                "name": "CPU",
                "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}},
            },
            {
                "name": "MEM",
                "valueFrom": {
                    "resourceFieldRef": {"containerName": "env", "resource": "limits.memory"}
                },
            },
            {
                "name": "CM",
                "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k", "optional": True}},
            },
            {"name": "SEC", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        ],
        envFrom=[
            {"prefix": "P_", "configMapRef": {"name": "cm"}},
            {"secretRef": {"name": "s", "optional": False}},
        ],
        command=["/bin/sh", "-c"],
        args=["echo $(PLAIN)"],
        workingDir="/work",
        stdin=True,
        tty=True,
    )
    out.append(("env valueFrom envFrom", {"spec": {"containers": [env]}}, None))
    volumes = [
        {"name": "scratch", "emptyDir": {}},
        {"name": "mem", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
        {
            "name": "cfg",
            "configMap": {
                "name": "cm",
                "items": [{"key": "a", "path": "a.txt", "mode": 420}],
                "defaultMode": 420,
            },
        },
        {"name": "sec", "secret": {"secretName": "s", "optional": True}},
        {"name": "host", "hostPath": {"path": "/var/log", "type": "Directory"}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "data", "readOnly": True}},
        {
            "name": "proj",
            "projected": {
                "sources": [
                    {
                        "serviceAccountToken": {
                            "audience": "api",
                            "expirationSeconds": 3600,
                            "path": "token",
                        }
                    },
                    {
                        "downwardAPI": {
                            "items": [
                                {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}
                            ]
                        }
                    },
                ],
                "defaultMode": 292,
            },
        },
        {
            "name": "down",
            "downwardAPI": {
                "items": [
                    {
                        "path": "cpu",
                        "resourceFieldRef": {
                            "containerName": "v",
                            "resource": "requests.cpu",
                            "divisor": "500m",
                        },
                    }
                ]
            },
        },
        {"name": "nfs", "nfs": {"server": "10.0.0.1", "path": "/exports"}},
    ]
    mounts = [
        {"name": "scratch", "mountPath": "/scratch"},
        {
            "name": "data",
            "mountPath": "/data",
            "readOnly": True,
            "subPathExpr": "$(POD)",
            "mountPropagation": "HostToContainer",
        },
    ]
    out.append(
        (
            "volumes",
            {
                "spec": {
                    "volumes": volumes,
                    "containers": [
                        container(
                            "v",
                            volumeMounts=mounts,
                            volumeDevices=[{"name": "blk", "devicePath": "/dev/xvda"}],
                        )
                    ],
                }
            },
            None,
        )
    )
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]},
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}
                        ]
                    },
                ]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 10,
                    "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]},
                }
            ],
        },
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "podAffinityTerm": {
                        "labelSelector": {
                            "matchLabels": {"app": "web", "tier": "fe"},
                            "matchExpressions": [{"key": "x", "operator": "DoesNotExist"}],
                        },
                        "topologyKey": "kubernetes.io/hostname",
                        "namespaces": ["default"],
                    },
                }
            ]
        },
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {}, "topologyKey": "zone"}
            ]
        },
    }
    tolerations = [
        {
            "key": "node.kubernetes.io/not-ready",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
        {"operator": "Exists"},
    ]
    out.append(
        (
            "affinity tolerations",
            {
                "spec": {
                    "containers": [container("x")],
                    "affinity": affinity,
                    "tolerations": tolerations,
                }
            },
            2,
        )
    )
    out.append(
        (
            "labels annotations metadata",
            {
                "metadata": {
                    "name": "tmpl",
                    "namespace": "ns",
                    "generateName": "g-",
                    "labels": {
                        "b": "2",
                        "a": "1",
                        "B": "3",
                        "a.b/c": "",
                        "Z": "z",
                        "app.kubernetes.io/name": "x",
                    },
                    "annotations": {
                        "note": "héllo wörld ✓",
                        "kubectl.kubernetes.io/restartedAt": "2021-01-01T00:00:00Z",
                        "ünï": "x",
                        "z": '{"a": 1}',
                    },
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Pod",
                            "name": "o",
                            "uid": "u-1",
                            "controller": True,
                            "blockOwnerDeletion": False,
                        }
                    ],
                    "finalizers": ["example.com/f"],
                    "generation": 5,
                    "deletionGracePeriodSeconds": 30,
                },
                "spec": {"containers": [container("m")]},
            },
            None,
        )
    )
    out.append(
        (
            "init containers",
            {
                "spec": {
                    "initContainers": [container("init", command=["true"]), container("init2")],
                    "containers": [container("main")],
                }
            },
            None,
        )
    )
    out.append(
        (
            "empty collections",
            {
                "metadata": {"labels": {}, "annotations": {}},
                "spec": {
                    "containers": [
                        container(
                            "e",
                            env=[],
                            args=[],
                            command=[],
                            ports=[],
                            resources={"limits": {}, "requests": {}},
                        )
                    ],
                    "volumes": [],
                    "tolerations": [],
                    "nodeSelector": {},
                    "securityContext": {"supplementalGroups": []},
                },
            },
            None,
        )
    )
    out.append(
        (
            "pod spec fields",
            {
                "spec": {
                    "containers": [
                        container(
                            "p",
                            imagePullPolicy="Always",
                            terminationMessagePolicy="FallbackToLogsOnError",
                        )
                    ],
                    "nodeSelector": {"disk": "ssd", "arch": "amd64"},
                    "serviceAccountName": "sa",
                    "serviceAccount": "sa",
                    "automountServiceAccountToken": False,
                    "hostNetwork": True,
                    "hostPID": True,
                    "hostIPC": True,
                    "shareProcessNamespace": True,
                    "hostname": "h",
                    "subdomain": "s",
                    "hostAliases": [{"ip": "10.0.0.2", "hostnames": ["a", "b"]}],
                    "dnsConfig": {
                        "nameservers": ["1.1.1.1"],
                        "searches": ["x.local"],
                        "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}],
                    },
                    "readinessGates": [{"conditionType": "example.com/ready"}],
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "zone",
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"app": "p"}},
                        }
                    ],
                    "overhead": {"cpu": "250m", "memory": "120Mi"},
                    "imagePullSecrets": [{"name": "regcred"}],
                    "priorityClassName": "high",
                    "priority": 1000,
                    "enableServiceLinks": False,
                    "preemptionPolicy": "Never",
                    "runtimeClassName": "gvisor",
                    "setHostnameAsFQDN": False,
                    "activeDeadlineSeconds": 600,
                    "nodeName": "n1",
                    "terminationGracePeriodSeconds": 0,
                }
            },
            5,
        )
    )
    out.append(
        (
            "managed fields",
            {
                "metadata": {
                    "managedFields": [
                        {
                            "manager": "kubectl",
                            "operation": "Update",
                            "apiVersion": "v1",
                            "fieldsType": "FieldsV1",
                            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
                        }
                    ]
                },
                "spec": {"containers": [container("mf")]},
            },
            None,
        )
    )
    eph = {"name": "debug", "image": "busybox", "targetContainerName": "main", "stdin": True}
    out.append(
        (
            "ephemeral containers",
            {"spec": {"containers": [container("main")], "ephemeralContainers": [eph]}},
            None,
        )
    )
    return out


def main() -> None:
    binary = sys.argv[1]
    rows = cases()
    lines = "".join(
        json.dumps(
            {"template": t, "collisionCount": c},
            separators=(",", ":"),
            sort_keys=True,
            ensure_ascii=False,
        )
        + "\n"
        for _, t, c in rows
    )
    done = subprocess.run([binary, "hash"], input=lines.encode(), capture_output=True, check=True)
    hashes = [json.loads(line)["hash"] for line in done.stdout.decode().splitlines()]
    fixture = [
        {"name": name, "template": t, "collisionCount": c, "hash": h}
        for (name, t, c), h in zip(rows, hashes, strict=True)
    ]
    OUT.write_text(json.dumps(fixture, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"{len(fixture)} cases -> {OUT}")


if __name__ == "__main__":
    main()
