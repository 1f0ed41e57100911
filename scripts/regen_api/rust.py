"""cuabi-sys: bindgen's output over the header (flags in bindings/rust/regen-sys.sh)."""

from __future__ import annotations

import os
import subprocess
from typing import Any, Dict

from model import REPO


def outputs(model: Dict[str, Any]) -> Dict[str, str]:
    script = os.path.join(REPO, "bindings", "rust", "regen-sys.sh")
    out = subprocess.run([script, "--stdout"], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"regen: bindgen failed:\n{out.stderr}")
    return {"bindings/rust/cuabi-sys/src/bindings.rs": out.stdout}
