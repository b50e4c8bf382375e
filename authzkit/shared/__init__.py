"""What the tools share, above the client: connecting to a sandbox or a real service
(``connection``), consent to wrong answers (``consent``), the named flows (``flows``), the
policy matrix (``matrix``: its plan and its table), the command-line options
(``options``), the extras a command needs (``extras``) and the Markdown of a trace
(``trace``).

The one side it may import is the sandbox, lazily, to start an embedded one.
"""

__all__: list[str] = []
