"""Notebook widgets: challenge answer forms, and the policy explorer.

A :class:`ChallengeForm` shows one field per credential kind the challenge accepts (a
password box for ``pin`` and ``login_password``, a text box for ``totp`` with a "generate
from secret" helper when the TOTP secret is known), and a Submit button that encrypts the
answer, sends it and shows the outcome with the solution's decoded protected header.

Unattended runs (nbval, "Run All", CI) never wait for a click: when the answer is known
(the sandbox world, or ``AUTHZKIT_ANSWER_<KIND>``) and ``Settings.auto_submit`` is on, the
form submits itself while the cell runs. Known answers stay in Python, never in widget
state; typed values are cleared from the widgets as soon as they are read.

A :class:`PolicyExplorer` has dropdowns subject / action / resource; each choice sends one
plain authorize request (never a solution) and shows the outcome, the exchange and its curl;
an :class:`AuthzenExplorer` does the same with one AuthZEN evaluation on an AuthZEN PDP.

Callbacks never raise: every failure is shown in the widget. Only notebooks import this
package (it needs the ``notebooks`` extra); ``import authzkit`` never does.
"""

from __future__ import annotations

from authzkit.widgets.attempt import Attempt
from authzkit.widgets.authzen import AuthzenExplorer
from authzkit.widgets.closing import close_when_done
from authzkit.widgets.explorer import PolicyExplorer
from authzkit.widgets.form import ChallengeForm
from authzkit.widgets.tables import readable

__all__ = [
    "Attempt",
    "AuthzenExplorer",
    "ChallengeForm",
    "PolicyExplorer",
    "close_when_done",
    "readable",
]
