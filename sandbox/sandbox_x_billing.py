"""X's pay-per-usage billing as the sandbox plays it: the developer account's
credit balance, its spending limit, the price of each request, the 24-hour UTC
day deduplication of reads, and the ledger of what was charged.

X's rules (https://docs.x.com/x-api/getting-started/pricing): reads are charged
per resource returned, writes per request; a resource read twice in one UTC day
is charged once (per app: billing is tracked at the app level); failed requests
cost nothing; the balance may go slightly negative, after which requests are
blocked until credits are added; a spending limit blocks requests for the rest
of the billing cycle. Money is kept in integer millionths of a dollar.
"""
from sandbox_x_errors import problem_type
from sandbox_http import json_response

MICROS = 1_000_000


def dollars(micros):
    return micros / MICROS


class Credits:
    """The developer account's money (caller holds the world lock)."""

    def __init__(self, balance, limit, prices):
        self.balance = balance
        self.limit = limit              # None: no spending limit
        self.prices = prices
        self.total = 0                  # charged this billing cycle (since start or reset)
        self.charges = []
        self.seen_ids = {}              # (app, key, UTC day) -> ids charged that day
        self.seen_spans = {}            # (app, key, listed user, UTC day) -> [(start, end), ...]

    @classmethod
    def from_config(cls, cfg):
        return cls(cfg.x_billing_balance, cfg.x_billing_limit, dict(cfg.x_billing_prices))

    def apply(self, settings):
        """A control body's `credits`, as sandbox_world.billing_settings gives it."""
        balance, limit, prices = settings
        if balance is not None:
            self.balance = balance
        if limit is not ...:
            self.limit = limit
        if prices:
            self.prices.update(prices)

    def clear_ledger(self):
        self.total = 0
        self.charges = []
        self.seen_ids = {}
        self.seen_spans = {}

    def new_ids(self, app, key, ids, day):
        seen = self.seen_ids.setdefault((app, key, day), set())
        fresh = [i for i in dict.fromkeys(ids) if i not in seen]
        seen.update(fresh)
        return len(fresh)

    def new_span(self, app, key, listed, start, end, day):
        """How many of positions start..end-1 of a list were not charged today;
        records them. A list's charged positions are kept as disjoint spans."""
        spans = self.seen_spans.get((app, key, listed, day), [])
        covered, lo, hi, kept = 0, start, end, []
        for a, b in spans:
            if b < start or a > end:
                kept.append((a, b))
                continue
            covered += max(0, min(b, end) - max(a, start))
            lo, hi = min(lo, a), max(hi, b)
        kept.append((lo, hi))
        self.seen_spans[(app, key, listed, day)] = sorted(kept)
        return (end - start) - covered

    def view(self):
        return {"balance": dollars(self.balance), "total": dollars(self.total),
                "spending_limit": None if self.limit is None else dollars(self.limit),
                "prices": {k: dollars(v) for k, v in self.prices.items()},
                "charges": list(self.charges)}


def utc_day(now):
    return int(now // 86400)


def account_id(world):
    return world.config.x_billing_account


def refusal(world, meta):
    """The answer to a request the account cannot pay for, else None (caller
    holds the lock). X blocks requests once the balance is zero or below, and
    once this billing cycle's spending reached the limit."""
    credits = world.x_credits
    acct = account_id(world)
    if credits.balance <= 0:
        meta["billing"] = "credits"
        return json_response(402, {"account_id": int(acct), "title": "CreditsDepleted",
                                   "detail": "Your enrolled account [%s] does not have any credits to fulfill "
                                             "this request." % acct,
                                   "type": problem_type(world, "credits")}, meta=meta)
    if credits.limit is not None and credits.total >= credits.limit:
        meta["billing"] = "spending_limit"
        return json_response(403, {"account_id": int(acct), "title": "SpendCapReached",
                                   "detail": "Your enrolled account [%s] has reached its spending limit for the "
                                             "current billing cycle." % acct,
                                   "type": problem_type(world, "spend-cap")}, meta=meta)
    return None


def following_key(world, auth, listed_id, api):
    """owned_read when a v2 following list is the authenticated user's own and
    that user owns the app (X: "when {id} matches the authenticated user and
    that user is the owner of the developer app"); following_read otherwise."""
    own = api == 2 and auth.user is not None and auth.user["id"] == listed_id == account_id(world)
    return "owned_read" if own else "following_read"


def settle(world, auth, req, meta, now):
    """Charges what a 2xx answer's meta["priced"] says it delivered:
    {"key", "ids"} (reads of resources by id), {"key", "span": (listed user,
    start, end)} (following pages by list position) or {"key", "units"}
    (writes). Caller holds the lock."""
    priced = meta.get("priced")
    if not priced:
        return
    credits = world.x_credits
    key = priced["key"]
    app = auth.app["consumer_key"] if auth.app else "-"
    day = utc_day(now)
    if "ids" in priced:
        units = credits.new_ids(app, key, priced["ids"], day)
    elif "span" in priced:
        units = credits.new_span(app, key, *priced["span"], day)
    else:
        units = priced["units"]
    if units <= 0:
        return
    each = credits.prices[key]
    amount = units * each
    credits.balance -= amount
    credits.total += amount
    charge = {"key": key, "units": units, "each": dollars(each), "amount": dollars(amount),
              "method": req.method, "path": req.path, "user": auth.user["id"] if auth.user else None,
              "app": auth.app["name"] if auth.app else None, "time": now}
    if "post_id" in priced:
        charge["post_id"] = priced["post_id"]
    credits.charges.append(charge)
    meta["charged"] = dollars(amount)


def ledger(world):
    with world.lock:
        return world.x_credits.view()
