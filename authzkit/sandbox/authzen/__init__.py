"""The sandbox speaking the OpenID AuthZEN Authorization API 1.0 (``--dialect authzen``):
evaluation, evaluations, the three searches and the PDP metadata, decided from an AuthZEN
world (:mod:`~authzkit.sandbox.authzen.world`); the wire facts are
:mod:`authzkit.wire.authzen`.
"""

__all__: list[str] = []
