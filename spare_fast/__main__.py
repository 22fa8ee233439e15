from spare_fast.cli import main

raise SystemExit(main())
