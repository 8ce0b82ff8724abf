import sys
from pathlib import Path


def main():
    name = sys.argv[2] if len(sys.argv) > 2 else "mylib"
    root = Path(name)
    (root / "src" / name).mkdir(parents=True, exist_ok=True)
    (root / "tests").mkdir(exist_ok=True)
    (root / "src" / name / "__init__.py").write_text('__version__ = "0.1.0"\n')
    print(f"created {root}")
