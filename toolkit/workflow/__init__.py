"""Stage 0 and workflow tools: profiles, capabilities, fan-out, inventory, skills, init, eval."""
