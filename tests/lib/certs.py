"""A test PKI made with openssl (test_http_auth.py, test_mtls.py): EC P-256
keys (mode 0600), CAs, and certificates they sign, in a temporary directory
removed with the other work directories of a passing run."""
import os
import subprocess
import tempfile

import fbtest


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


class Pki:
    """name.key and name.pem files under self.dir."""

    def __init__(self, prefix="fb-pki-"):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        fbtest._workdirs.append(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, text, mode=0o600):
        with open(self.path(name), "w") as f:
            f.write(text)
        os.chmod(self.path(name), mode)

    def key(self, name):
        _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-out", f"{name}.key", cwd=self.dir)
        os.chmod(self.path(f"{name}.key"), 0o600)

    def ca(self, name):
        """A self-signed CA, CN "fabricbus test <name>"."""
        self.key(name)
        _openssl("req", "-x509", "-new", "-key", f"{name}.key", "-out", f"{name}.pem",
                 "-days", "2", "-subj", f"/CN=fabricbus test {name}", cwd=self.dir)

    def cert(self, name, cn, ca="ca", san=None, days=2):
        """name.pem/name.key for CN=cn signed by ca, with subjectAltName san
        if given; days=-1 gives an expired one. Returns self (to chain)."""
        self.key(name)
        _openssl("req", "-new", "-key", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}",
                 cwd=self.dir)
        ext = []
        if san:
            self.write(f"{name}.ext", f"subjectAltName={san}\n", 0o644)
            ext = ["-extfile", f"{name}.ext"]
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                 "-CAcreateserial", "-out", f"{name}.pem", "-days", str(days), *ext, cwd=self.dir)
        return self
