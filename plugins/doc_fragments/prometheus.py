# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function


class ModuleDocFragment:
    # The options of a module that reads Prometheus (plugins/module_utils/_prometheus.py: argument_spec()).
    DOCUMENTATION = r"""
options:
  prometheus_url:
    description:
      - A Prometheus server (or anything serving its HTTP API, such as Thanos or Mimir) to read the unit's
        series from, with its path prefix if any (V(https://prom.example.com/prometheus)), without C(/api/v1).
      - The managed host sends the queries; it must reach this URL.
    type: str
  prometheus_bearer_token:
    description:
      - A bearer token sent as C(Authorization) with every query. Not together with O(prometheus_username).
    type: str
  prometheus_username:
    description:
      - Basic auth user (Prometheus' own C(--web.config.file) C(basic_auth_users), or a proxy's).
    type: str
  prometheus_password:
    description:
      - Basic auth password for O(prometheus_username).
    type: str
  prometheus_headers:
    description:
      - Headers sent with every query, such as a tenant (C(X-Scope-OrgID)) or a proxy's key. An
        C(Authorization) header here excludes O(prometheus_bearer_token) and basic auth.
    type: dict
    default: {}
  prometheus_validate_certs:
    description:
      - Verify the Prometheus server's TLS certificate.
    type: bool
    default: true
  prometheus_ca_path:
    description:
      - A CA bundle (PEM) on the managed host to verify the Prometheus server's certificate with; the system's
        CAs when not given.
    type: path
  prometheus_timeout:
    description:
      - Seconds one query may take on the wall clock; also sent as the query's C(timeout) parameter, so that
        Prometheus stops evaluating when the module stops waiting.
    type: float
    default: 10
  prometheus_selector:
    description:
      - The PromQL label matchers that select the unit's series among Prometheus' (the inside of C({...})),
        for example V(instance="ct129:30000") or V(job="sglang", host="ct129"). They must select one unit.
    type: str
"""
