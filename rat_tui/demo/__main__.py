"""`python -m rat_tui.demo`: run the embedded demo ACP agent on stdin/stdout."""

from rat_tui.demo.agent import main

main()
