# bench fragment
