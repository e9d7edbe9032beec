"""LLM gateway: OpenAI-compatible inference proxy with routing, failover, breakers,
admission control, rate limits, caching and a daily budget (spec 001 §A)."""
