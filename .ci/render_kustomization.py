"""Renders deploy/kubernetes/kustomization.yaml without kustomize: the resources in order,
the namespace set on namespaced objects, and the `images` overrides applied to containers.

Only the fields the project's kustomization uses are understood; any other field is an error,
so that the rendering validated is never silently different from `kubectl kustomize`'s.

Usage: python3 render_kustomization.py DIR > rendered.yaml
"""

import sys
from pathlib import Path

import yaml

KNOWN = {"apiVersion", "kind", "namespace", "resources", "images"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume"}


def override_image(image: str, overrides: list) -> str:
    name, _, tag = image.partition(":")
    for rule in overrides:
        if rule["name"] == name:
            return f'{rule.get("newName", name)}:{rule.get("newTag", tag or "latest")}'
    return image


def render(directory: Path) -> list:
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unknown = set(kustomization) - KNOWN
    if unknown:
        raise SystemExit(f"render_kustomization: fields not understood: {sorted(unknown)}")
    namespace = kustomization.get("namespace")
    overrides = kustomization.get("images", [])
    documents = []
    for resource in kustomization["resources"]:
        for document in yaml.safe_load_all((directory / resource).read_text()):
            if document is None:
                continue
            if namespace and document["kind"] not in CLUSTER_SCOPED:
                document["metadata"]["namespace"] = namespace
            pod = document.get("spec", {}).get("template", {}).get("spec", {})
            for container in pod.get("containers", []) + pod.get("initContainers", []):
                container["image"] = override_image(container["image"], overrides)
            documents.append(document)
    return documents


if __name__ == "__main__":
    yaml.safe_dump_all(render(Path(sys.argv[1])), sys.stdout, sort_keys=False)
