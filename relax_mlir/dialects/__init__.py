"""The relax dialect: types, ops and the IRDL generated from them."""
