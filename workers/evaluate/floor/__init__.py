"""The Floor: does the output parse and meet its declared contract? Decided, never guessed."""
