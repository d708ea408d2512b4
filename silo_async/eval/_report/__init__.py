"""What an eval's records add up to: statistics, comparisons, the summary and its reports.

Kept apart from running an eval (:mod:`silo_async.eval`'s root modules) and from recorded runs
(:mod:`silo_async.eval._recorded`): everything here works on :class:`RolloutRecord` values, so
the same statistics serve a live eval, a resumed one and one read back from disk. ``_stats``
(pass rates, pass@k, pass^k, intervals), ``_compare`` (agents side by side),
``_robustness`` (an eval with faults against its baseline), ``_prices`` and
``_cells`` (cost and token text), ``_records`` and ``_details`` (what a rollout leaves for the
books and the report), ``_summary`` (``summary.json``), ``_markdown`` (``summary.md``), ``_data``
and ``_html`` (``report.html``, with ``_report.js`` and ``_report.css``).
"""
