"""Shared pieces of the attack suite (tests/security/): the integration
helpers (real daemons on loopback) plus the second account every
security-relevant test uses next to the first and an anonymous client."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from s3util import ACCESS_KEY, SECRET_KEY, REGION, Cluster, check, error_code, run_tests  # noqa: E402,F401

# the second account of s3util.Cluster's credentials file
OTHER_ACCESS_KEY = "AKIAOTHERUSER0000000"
OTHER_SECRET_KEY = "other-secret-key-0000000000000000000000"


def accounts(c):
    """(owner A, other account B, anonymous) boto3 clients for cluster c
    (SigV4 also for presigned URLs)."""
    from botocore import UNSIGNED
    a = c.boto(signature_version="s3v4")
    b = c.boto(OTHER_ACCESS_KEY, OTHER_SECRET_KEY, signature_version="s3v4")
    anon = c.boto(signature_version=UNSIGNED)
    return a, b, anon
