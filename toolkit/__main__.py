from toolkit.entry import main

raise SystemExit(main())
