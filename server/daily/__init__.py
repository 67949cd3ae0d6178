"""The deal of the day: its secret deal, the attempts and the day's leaderboard."""
