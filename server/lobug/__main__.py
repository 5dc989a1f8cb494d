from lobug.cli import main

raise SystemExit(main())
