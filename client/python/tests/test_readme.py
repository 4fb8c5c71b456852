"""Every ```python snippet of client/python/README.md runs as it is against a real weftd."""

import os
import re
import subprocess

import pytest

from support import PYTHON_SRC, ROOT

README = (ROOT / "client" / "python" / "README.md").read_text()
SNIPPETS = re.findall(r"```python\n(.*?)```", README, re.S)


def test_the_readme_has_snippets():
    assert len(SNIPPETS) >= 3


@pytest.mark.parametrize("n", range(len(SNIPPETS)))
def test_a_readme_snippet_runs_as_it_is(weftd, n):
    r = subprocess.run(["/usr/bin/python3", "-c", SNIPPETS[n]], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(PYTHON_SRC), "WEFT_URL": weftd.url})
    assert r.returncode == 0, f"snippet {n} failed:\n{SNIPPETS[n]}\n{r.stdout}\n{r.stderr}"
