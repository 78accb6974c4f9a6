"""irjit's command-line tool (`irtool`) and developer scripts."""
