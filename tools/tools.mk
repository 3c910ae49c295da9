# tools fragment
