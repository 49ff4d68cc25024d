# Shop.Probe: functions called with known arguments, for the tests of call
# patterns in Elixir form.  Each one only returns :ok, so what a pattern
# traces is told apart by the arguments alone.
defmodule Shop.Probe do
  def price(_item, _currency), do: :ok
  def tag(_kind), do: :ok
  def settle(_result), do: :ok
  def total(_order), do: :ok
  def label(_name), do: :ok

  def run do
    for item <- [%{id: 1, qty: 2}, %{id: 4, qty: 1}, %{id: 7}, %{qty: 9}, [id: 5], %{"id" => 5}, %{"id" => 3}],
        do: price(item, "EUR")

    for kind <- [:new, :paid, :shipped, "new", nil], do: tag(kind)
    for r <- [{:ok, 1}, {:error, :closed}, {:ok}, :ok, {}, "ok"], do: settle(r)

    for o <- [
          %Shop.Order{id: 1, status: :paid, total: 5.0},
          %Shop.Order{id: 2, status: :new, total: 150.0},
          %{status: :paid},
          %{__struct__: Shop.Cache, status: :paid}
        ],
        do: total(o)

    for n <- ["gift", "gifts", 'gift', :gift], do: label(n)
    :ok
  end
end
