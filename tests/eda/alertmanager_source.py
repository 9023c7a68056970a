# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A TEST DOUBLE of ``ansible.eda.alertmanager``, the event source the shipped rulebook
extensions/eda/rulebooks/rollback_on_alert.yml names.

The real source is in the ``ansible.eda`` collection, which is on neither PyPI nor in the ``ansible``
package (DESIGN.md): it cannot be installed where the tests run. tests/eda/test_alert_path.py puts
this file in a directory handed to ansible-rulebook with ``--source-dir`` as
``ansible.eda.alertmanager.py``; ansible-rulebook looks there before the collections, so the shipped
rulebook runs unchanged, with its own source arguments.

What it does is what the real source's documentation says it does (ansible.eda 2.x
``plugins/event_source/alertmanager.py``), written here from that description: an HTTP server on
``host``:``port`` (default localhost:5000) answers ``GET /`` with "up"; each ``POST /<endpoint>``
with Alertmanager's webhook JSON puts, unless ``skip_original_data``, one event
``{"payload": <the whole body>, "meta": {"endpoint", "headers"}}``, then one event per alert found at
``data_alerts_path`` (default ``alerts``, separator ``data_path_separator``):
``{"alert": <the alert>, "meta": {"endpoint", "headers", "hosts": [<host>]}}``, the host read at
``data_host_path`` inside the alert (default ``labels.instance``) with any ``:port`` cut off, and
answers 202 "Received". Anything beyond that (its logging, its error handling) is not reproduced.
"""

import asyncio

from aiohttp import web


def _get(data, path, separator):
    """The value at ``path`` (keys joined by ``separator``) inside ``data``; KeyError when absent."""
    for key in path.split(separator):
        if not isinstance(data, dict) or key not in data:
            raise KeyError(path)
        data = data[key]
    return data


def _hosts(alert, path, separator):
    if not path:
        return []
    try:
        host = _get(alert, path, separator)
    except KeyError:
        return []
    return [str(host).split(":", maxsplit=1)[0]]


async def main(queue, args):
    host_path = str(args.get("data_host_path", "labels.instance"))
    alerts_path = str(args.get("data_alerts_path", "alerts"))
    separator = str(args.get("data_path_separator", "."))
    skip_original = bool(args.get("skip_original_data", False))

    async def status(_request):
        return web.Response(status=200, text="up")

    async def webhook(request):
        payload = await request.json()
        meta = {"endpoint": request.match_info["endpoint"], "headers": dict(request.headers)}
        if not skip_original:
            await queue.put({"payload": payload, "meta": dict(meta)})
        if not alerts_path:
            alerts = [payload]
        else:
            try:
                alerts = _get(payload, alerts_path, separator)
            except KeyError:
                alerts = []
            if not isinstance(alerts, list):
                alerts = [alerts]
        for alert in alerts:
            await queue.put({"alert": alert, "meta": dict(meta, hosts=_hosts(alert, host_path, separator))})
        return web.Response(status=202, text="Received")

    app = web.Application()
    app.add_routes([web.get("/", status), web.post("/{endpoint}", webhook)])
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, args.get("host", "localhost"), int(args.get("port", 5000))).start()
    try:
        await asyncio.Future()
    finally:
        await runner.cleanup()
