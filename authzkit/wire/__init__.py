"""The wire layer: what the client and the sandbox both speak.

The service's paths, error types and bodies (``spec``, ``errors``, ``error_table``,
``oauth``), the JOSE of challenge solutions (``jwe``), the settings and the variables they
are read from (``config``, ``variables``, ``actions``, ``tls``, ``sessions``),
whether a URL serves a sandbox (``identity``, from its HTTP answer), and the small shared
tools (``clock``, ``locks``, ``redact``, ``openapi``, ``version``). It imports nothing else of
authzkit, so the sandbox can speak the same truth as the client without depending on it.
"""

__all__: list[str] = []
