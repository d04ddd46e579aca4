"""Observers: what watches a run (the dashboard, telemetry, a caller's measurements), each fed
the session's reports through :class:`~mpc.app.observers.observer_base.Observer`."""
