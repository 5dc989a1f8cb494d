"""What the two web surfaces, the REST API (`api/`) and the dashboard (`ui/`), share without
either importing the other: who the caller is (`roles`) and the running services a request
reaches (`deps`)."""
