from docindex.cli import main

raise SystemExit(main())
