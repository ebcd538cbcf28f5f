"""bayesrank: statistically sound LLM leaderboards from pairwise comparisons."""
