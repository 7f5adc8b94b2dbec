"""The Kubernetes manifests (deploy/kubernetes) against the Kubernetes API's own schemas
(kubernetes-validate, strict: an unknown field fails), at the oldest and the newest
Kubernetes release it carries that is still supported (1.30 and 1.37); and the
kustomizations hold together: every file they list exists, the overlay's image replaces
the one the base's containers name, the Secret the pods read is the one the overlay
generates, the ConfigMap's settings are ones ctxd reads, and the probes ask ctxd's own
endpoints on its metrics port."""
import glob
import os
import re
import sys
import unittest

import kubernetes_validate
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KUBE = os.path.join(REPO, "deploy", "kubernetes")
VERSIONS = ("1.30.0", "1.37.0")


def documents(path):
    with open(path, encoding="utf-8") as file:
        return [doc for doc in yaml.safe_load_all(file) if doc]


def kustomization(directory):
    return documents(os.path.join(directory, "kustomization.yaml"))[0]


def resources():
    """Every object of the base and the example overlay, with its file."""
    out = []
    for directory in (os.path.join(KUBE, "base"), os.path.join(KUBE, "overlays", "example")):
        for name in kustomization(directory).get("resources", []):
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                out.extend((path, doc) for doc in documents(path))
    return out


def by_kind(kind):
    return [doc for _, doc in resources() if doc["kind"] == kind]


class Schemas(unittest.TestCase):
    def test_every_object_is_valid(self):
        found = resources()
        kinds = sorted({doc["kind"] for _, doc in found})
        self.assertEqual(kinds, ["ConfigMap", "Deployment", "HorizontalPodAutoscaler", "Job",
                                 "Namespace", "PodDisruptionBudget", "Service"])
        for path, doc in found:
            for version in VERSIONS:
                with self.subTest(path=os.path.relpath(path, REPO), version=version):
                    kubernetes_validate.validate(doc, version, strict=True)

    def test_an_invalid_object_is_refused(self):
        deployment = dict(by_kind("Deployment")[0])
        deployment["spec"] = dict(deployment["spec"], replicas="two")
        with self.assertRaises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(deployment, VERSIONS[-1], strict=True)


class Kustomizations(unittest.TestCase):
    def test_listed_files_exist(self):
        for directory in (os.path.join(KUBE, "base"), os.path.join(KUBE, "overlays", "example")):
            for name in kustomization(directory).get("resources", []):
                self.assertTrue(os.path.exists(os.path.join(directory, name)), f"{directory}: {name}")

    def test_the_overlay_sets_the_image_and_the_database_secret(self):
        overlay = kustomization(os.path.join(KUBE, "overlays", "example"))
        images = {image["name"] for image in overlay["images"]}
        secrets = {secret["name"] for secret in overlay["secretGenerator"]}
        for kind in ("Deployment", "Job"):
            spec = by_kind(kind)[0]["spec"]["template"]["spec"]
            for container in spec["containers"]:
                self.assertIn(container["image"], images, kind)
                for source in container["envFrom"]:
                    if "secretRef" in source:
                        self.assertIn(source["secretRef"]["name"], secrets, kind)
        self.assertTrue(os.path.exists(os.path.join(KUBE, "overlays", "example", "database.env.example")))

    def test_the_settings_are_ctxds(self):
        """Every key of the ConfigMap is a setting `ctxd serve --help` names."""
        import subprocess
        ctxd = os.environ["CTXD_BIN"]
        help_text = subprocess.run([ctxd, "serve", "--help"], capture_output=True, text=True, check=True).stdout
        for key in by_kind("ConfigMap")[0]["data"]:
            self.assertIn(f"env: {key}=", help_text, key)

    def test_the_probes_ask_ctxds_endpoints(self):
        deployment = by_kind("Deployment")[0]
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        ports = {port["name"]: port["containerPort"] for port in container["ports"]}
        settings = by_kind("ConfigMap")[0]["data"]
        self.assertEqual(int(re.sub(r".*:", "", settings["CTXD_METRICS_LISTEN"])), ports["metrics"])
        self.assertEqual(int(re.sub(r".*:", "", settings["CTXD_LISTEN"])), ports["grpc"])
        self.assertEqual(container["readinessProbe"]["httpGet"], {"path": "/readyz", "port": "metrics"})
        self.assertEqual(container["livenessProbe"]["httpGet"], {"path": "/livez", "port": "metrics"})
        self.assertEqual(container["args"], ["serve"])
        self.assertEqual(by_kind("Job")[0]["spec"]["template"]["spec"]["containers"][0]["args"], ["migrate"])


def main():
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors)
    print(f"python-deploy: {result.testsRun - failed} passed, {failed} failed")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
