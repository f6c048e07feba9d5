from entropylaw.cli.main import main

raise SystemExit(main())
