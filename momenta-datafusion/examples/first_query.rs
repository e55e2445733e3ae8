//! The README's first program: momenta's `var_pop` beside DataFusion's on
//! two values far from zero.
//!
//! ```text
//! cargo run --release -p momenta-datafusion --example first_query
//! ```

use momenta_datafusion::datafusion::error::Result;
use momenta_datafusion::datafusion::prelude::SessionContext;

#[tokio::main]
async fn main() -> Result<()> {
    let ctx = SessionContext::new();
    momenta_datafusion::register_all(&ctx);
    let df = ctx
        .sql(
            "SELECT momenta_var_pop(x) AS exact, var_pop(x) AS builtin \
             FROM (VALUES (1e16), (1e16 + 2)) AS t(x)",
        )
        .await?;
    df.show().await?; // exact: 1; DataFusion's var_pop says 2
    Ok(())
}
