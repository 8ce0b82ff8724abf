"""Small helpers for release checks."""
import pathlib, tomllib

def check_metadata(root="."):
    data = tomllib.loads(pathlib.Path(root, "pyproject.toml").read_text())
    proj = data.get("project", {})
    missing = [k for k in ("name", "version", "description", "readme", "license") if k not in proj]
    return missing
