def forecast(city: str, days: int = 3) -> str:
    """Return a short weather forecast for a city (1 to 7 days).

    Important: days outside 1 to 7 are clamped.
    """
    return f"{city}: sunny for {min(max(days, 1), 7)} days"
