import sys

from spare_fast._install_info import main as _install_info_main
from spare_fast.cli import main

# --includedir / --cmakedir (where the wheel keeps the C++ package) before the CLI proper.
_code = _install_info_main(sys.argv[1:])
raise SystemExit(main() if _code is None else _code)
