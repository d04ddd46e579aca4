"""The application around the planner library: configs and their schema, assembly, the
runtime loops and session, plants, command sources, observers (run record, dashboard, viewer),
plots, replay and the ``mpc-run`` command line. Entry point for code: :func:`mpc.app.run.run`."""
